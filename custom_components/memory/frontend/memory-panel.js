var vt=Object.defineProperty;var yt=(r,t,e)=>t in r?vt(r,t,{enumerable:!0,configurable:!0,writable:!0,value:e}):r[t]=e;var D=(r,t,e)=>yt(r,typeof t!="symbol"?t+"":t,e);var N=globalThis,H=N.ShadowRoot&&(N.ShadyCSS===void 0||N.ShadyCSS.nativeShadow)&&"adoptedStyleSheets"in Document.prototype&&"replace"in CSSStyleSheet.prototype,L=Symbol(),tt=new WeakMap,S=class{constructor(t,e,s){if(this._$cssResult$=!0,s!==L)throw Error("CSSResult is not constructable. Use `unsafeCSS` or `css` instead.");this.cssText=t,this.t=e}get styleSheet(){let t=this.o,e=this.t;if(H&&t===void 0){let s=e!==void 0&&e.length===1;s&&(t=tt.get(e)),t===void 0&&((this.o=t=new CSSStyleSheet).replaceSync(this.cssText),s&&tt.set(e,t))}return t}toString(){return this.cssText}},et=r=>new S(typeof r=="string"?r:r+"",void 0,L),j=(r,...t)=>{let e=r.length===1?r[0]:t.reduce((s,i,o)=>s+(a=>{if(a._$cssResult$===!0)return a.cssText;if(typeof a=="number")return a;throw Error("Value passed to 'css' function must be a 'css' function result: "+a+". Use 'unsafeCSS' to pass non-literal values, but take care to ensure page security.")})(i)+r[o+1],r[0]);return new S(e,r,L)},st=(r,t)=>{if(H)r.adoptedStyleSheets=t.map(e=>e instanceof CSSStyleSheet?e:e.styleSheet);else for(let e of t){let s=document.createElement("style"),i=N.litNonce;i!==void 0&&s.setAttribute("nonce",i),s.textContent=e.cssText,r.appendChild(s)}},B=H?r=>r:r=>r instanceof CSSStyleSheet?(t=>{let e="";for(let s of t.cssRules)e+=s.cssText;return et(e)})(r):r;var{is:bt,defineProperty:xt,getOwnPropertyDescriptor:wt,getOwnPropertyNames:At,getOwnPropertySymbols:St,getPrototypeOf:Et}=Object,M=globalThis,it=M.trustedTypes,Ct=it?it.emptyScript:"",kt=M.reactiveElementPolyfillSupport,E=(r,t)=>r,I={toAttribute(r,t){switch(t){case Boolean:r=r?Ct:null;break;case Object:case Array:r=r==null?r:JSON.stringify(r)}return r},fromAttribute(r,t){let e=r;switch(t){case Boolean:e=r!==null;break;case Number:e=r===null?null:Number(r);break;case Object:case Array:try{e=JSON.parse(r)}catch{e=null}}return e}},ot=(r,t)=>!bt(r,t),rt={attribute:!0,type:String,converter:I,reflect:!1,useDefault:!1,hasChanged:ot};Symbol.metadata??=Symbol("metadata"),M.litPropertyMetadata??=new WeakMap;var $=class extends HTMLElement{static addInitializer(t){this._$Ei(),(this.l??=[]).push(t)}static get observedAttributes(){return this.finalize(),this._$Eh&&[...this._$Eh.keys()]}static createProperty(t,e=rt){if(e.state&&(e.attribute=!1),this._$Ei(),this.prototype.hasOwnProperty(t)&&((e=Object.create(e)).wrapped=!0),this.elementProperties.set(t,e),!e.noAccessor){let s=Symbol(),i=this.getPropertyDescriptor(t,s,e);i!==void 0&&xt(this.prototype,t,i)}}static getPropertyDescriptor(t,e,s){let{get:i,set:o}=wt(this.prototype,t)??{get(){return this[e]},set(a){this[e]=a}};return{get:i,set(a){let h=i?.call(this);o?.call(this,a),this.requestUpdate(t,h,s)},configurable:!0,enumerable:!0}}static getPropertyOptions(t){return this.elementProperties.get(t)??rt}static _$Ei(){if(this.hasOwnProperty(E("elementProperties")))return;let t=Et(this);t.finalize(),t.l!==void 0&&(this.l=[...t.l]),this.elementProperties=new Map(t.elementProperties)}static finalize(){if(this.hasOwnProperty(E("finalized")))return;if(this.finalized=!0,this._$Ei(),this.hasOwnProperty(E("properties"))){let e=this.properties,s=[...At(e),...St(e)];for(let i of s)this.createProperty(i,e[i])}let t=this[Symbol.metadata];if(t!==null){let e=litPropertyMetadata.get(t);if(e!==void 0)for(let[s,i]of e)this.elementProperties.set(s,i)}this._$Eh=new Map;for(let[e,s]of this.elementProperties){let i=this._$Eu(e,s);i!==void 0&&this._$Eh.set(i,e)}this.elementStyles=this.finalizeStyles(this.styles)}static finalizeStyles(t){let e=[];if(Array.isArray(t)){let s=new Set(t.flat(1/0).reverse());for(let i of s)e.unshift(B(i))}else t!==void 0&&e.push(B(t));return e}static _$Eu(t,e){let s=e.attribute;return s===!1?void 0:typeof s=="string"?s:typeof t=="string"?t.toLowerCase():void 0}constructor(){super(),this._$Ep=void 0,this.isUpdatePending=!1,this.hasUpdated=!1,this._$Em=null,this._$Ev()}_$Ev(){this._$ES=new Promise(t=>this.enableUpdating=t),this._$AL=new Map,this._$E_(),this.requestUpdate(),this.constructor.l?.forEach(t=>t(this))}addController(t){(this._$EO??=new Set).add(t),this.renderRoot!==void 0&&this.isConnected&&t.hostConnected?.()}removeController(t){this._$EO?.delete(t)}_$E_(){let t=new Map,e=this.constructor.elementProperties;for(let s of e.keys())this.hasOwnProperty(s)&&(t.set(s,this[s]),delete this[s]);t.size>0&&(this._$Ep=t)}createRenderRoot(){let t=this.shadowRoot??this.attachShadow(this.constructor.shadowRootOptions);return st(t,this.constructor.elementStyles),t}connectedCallback(){this.renderRoot??=this.createRenderRoot(),this.enableUpdating(!0),this._$EO?.forEach(t=>t.hostConnected?.())}enableUpdating(t){}disconnectedCallback(){this._$EO?.forEach(t=>t.hostDisconnected?.())}attributeChangedCallback(t,e,s){this._$AK(t,s)}_$ET(t,e){let s=this.constructor.elementProperties.get(t),i=this.constructor._$Eu(t,s);if(i!==void 0&&s.reflect===!0){let o=(s.converter?.toAttribute!==void 0?s.converter:I).toAttribute(e,s.type);this._$Em=t,o==null?this.removeAttribute(i):this.setAttribute(i,o),this._$Em=null}}_$AK(t,e){let s=this.constructor,i=s._$Eh.get(t);if(i!==void 0&&this._$Em!==i){let o=s.getPropertyOptions(i),a=typeof o.converter=="function"?{fromAttribute:o.converter}:o.converter?.fromAttribute!==void 0?o.converter:I;this._$Em=i;let h=a.fromAttribute(e,o.type);this[i]=h??this._$Ej?.get(i)??h,this._$Em=null}}requestUpdate(t,e,s,i=!1,o){if(t!==void 0){let a=this.constructor;if(i===!1&&(o=this[t]),s??=a.getPropertyOptions(t),!((s.hasChanged??ot)(o,e)||s.useDefault&&s.reflect&&o===this._$Ej?.get(t)&&!this.hasAttribute(a._$Eu(t,s))))return;this.C(t,e,s)}this.isUpdatePending===!1&&(this._$ES=this._$EP())}C(t,e,{useDefault:s,reflect:i,wrapped:o},a){s&&!(this._$Ej??=new Map).has(t)&&(this._$Ej.set(t,a??e??this[t]),o!==!0||a!==void 0)||(this._$AL.has(t)||(this.hasUpdated||s||(e=void 0),this._$AL.set(t,e)),i===!0&&this._$Em!==t&&(this._$Eq??=new Set).add(t))}async _$EP(){this.isUpdatePending=!0;try{await this._$ES}catch(e){Promise.reject(e)}let t=this.scheduleUpdate();return t!=null&&await t,!this.isUpdatePending}scheduleUpdate(){return this.performUpdate()}performUpdate(){if(!this.isUpdatePending)return;if(!this.hasUpdated){if(this.renderRoot??=this.createRenderRoot(),this._$Ep){for(let[i,o]of this._$Ep)this[i]=o;this._$Ep=void 0}let s=this.constructor.elementProperties;if(s.size>0)for(let[i,o]of s){let{wrapped:a}=o,h=this[i];a!==!0||this._$AL.has(i)||h===void 0||this.C(i,void 0,o,h)}}let t=!1,e=this._$AL;try{t=this.shouldUpdate(e),t?(this.willUpdate(e),this._$EO?.forEach(s=>s.hostUpdate?.()),this.update(e)):this._$EM()}catch(s){throw t=!1,this._$EM(),s}t&&this._$AE(e)}willUpdate(t){}_$AE(t){this._$EO?.forEach(e=>e.hostUpdated?.()),this.hasUpdated||(this.hasUpdated=!0,this.firstUpdated(t)),this.updated(t)}_$EM(){this._$AL=new Map,this.isUpdatePending=!1}get updateComplete(){return this.getUpdateComplete()}getUpdateComplete(){return this._$ES}shouldUpdate(t){return!0}update(t){this._$Eq&&=this._$Eq.forEach(e=>this._$ET(e,this[e])),this._$EM()}updated(t){}firstUpdated(t){}};$.elementStyles=[],$.shadowRootOptions={mode:"open"},$[E("elementProperties")]=new Map,$[E("finalized")]=new Map,kt?.({ReactiveElement:$}),(M.reactiveElementVersions??=[]).push("2.1.2");var J=globalThis,at=r=>r,z=J.trustedTypes,nt=z?z.createPolicy("lit-html",{createHTML:r=>r}):void 0,ut="$lit$",f=`lit$${Math.random().toFixed(9).slice(2)}$`,_t="?"+f,Pt=`<${_t}>`,b=document,k=()=>b.createComment(""),P=r=>r===null||typeof r!="object"&&typeof r!="function",Y=Array.isArray,Ot=r=>Y(r)||typeof r?.[Symbol.iterator]=="function",q=`[ 	
\f\r]`,C=/<(?:(!--|\/[^a-zA-Z])|(\/?[a-zA-Z][^>\s]*)|(\/?$))/g,lt=/-->/g,ht=/>/g,v=RegExp(`>|${q}(?:([^\\s"'>=/]+)(${q}*=${q}*(?:[^ 	
\f\r"'\`<>=]|("|')|))|$)`,"g"),ct=/'/g,dt=/"/g,$t=/^(?:script|style|textarea|title)$/i,Z=r=>(t,...e)=>({_$litType$:r,strings:t,values:e}),c=Z(1),Bt=Z(2),It=Z(3),x=Symbol.for("lit-noChange"),l=Symbol.for("lit-nothing"),pt=new WeakMap,y=b.createTreeWalker(b,129);function gt(r,t){if(!Y(r)||!r.hasOwnProperty("raw"))throw Error("invalid template strings array");return nt!==void 0?nt.createHTML(t):t}var Tt=(r,t)=>{let e=r.length-1,s=[],i,o=t===2?"<svg>":t===3?"<math>":"",a=C;for(let h=0;h<e;h++){let n=r[h],p,u,d=-1,_=0;for(;_<n.length&&(a.lastIndex=_,u=a.exec(n),u!==null);)_=a.lastIndex,a===C?u[1]==="!--"?a=lt:u[1]!==void 0?a=ht:u[2]!==void 0?($t.test(u[2])&&(i=RegExp("</"+u[2],"g")),a=v):u[3]!==void 0&&(a=v):a===v?u[0]===">"?(a=i??C,d=-1):u[1]===void 0?d=-2:(d=a.lastIndex-u[2].length,p=u[1],a=u[3]===void 0?v:u[3]==='"'?dt:ct):a===dt||a===ct?a=v:a===lt||a===ht?a=C:(a=v,i=void 0);let g=a===v&&r[h+1].startsWith("/>")?" ":"";o+=a===C?n+Pt:d>=0?(s.push(p),n.slice(0,d)+ut+n.slice(d)+f+g):n+f+(d===-2?h:g)}return[gt(r,o+(r[e]||"<?>")+(t===2?"</svg>":t===3?"</math>":"")),s]},O=class r{constructor({strings:t,_$litType$:e},s){let i;this.parts=[];let o=0,a=0,h=t.length-1,n=this.parts,[p,u]=Tt(t,e);if(this.el=r.createElement(p,s),y.currentNode=this.el.content,e===2||e===3){let d=this.el.content.firstChild;d.replaceWith(...d.childNodes)}for(;(i=y.nextNode())!==null&&n.length<h;){if(i.nodeType===1){if(i.hasAttributes())for(let d of i.getAttributeNames())if(d.endsWith(ut)){let _=u[a++],g=i.getAttribute(d).split(f),R=/([.?@])?(.*)/.exec(_);n.push({type:1,index:o,name:R[2],strings:g,ctor:R[1]==="."?V:R[1]==="?"?F:R[1]==="@"?K:A}),i.removeAttribute(d)}else d.startsWith(f)&&(n.push({type:6,index:o}),i.removeAttribute(d));if($t.test(i.tagName)){let d=i.textContent.split(f),_=d.length-1;if(_>0){i.textContent=z?z.emptyScript:"";for(let g=0;g<_;g++)i.append(d[g],k()),y.nextNode(),n.push({type:2,index:++o});i.append(d[_],k())}}}else if(i.nodeType===8)if(i.data===_t)n.push({type:2,index:o});else{let d=-1;for(;(d=i.data.indexOf(f,d+1))!==-1;)n.push({type:7,index:o}),d+=f.length-1}o++}}static createElement(t,e){let s=b.createElement("template");return s.innerHTML=t,s}};function w(r,t,e=r,s){if(t===x)return t;let i=s!==void 0?e._$Co?.[s]:e._$Cl,o=P(t)?void 0:t._$litDirective$;return i?.constructor!==o&&(i?._$AO?.(!1),o===void 0?i=void 0:(i=new o(r),i._$AT(r,e,s)),s!==void 0?(e._$Co??=[])[s]=i:e._$Cl=i),i!==void 0&&(t=w(r,i._$AS(r,t.values),i,s)),t}var W=class{constructor(t,e){this._$AV=[],this._$AN=void 0,this._$AD=t,this._$AM=e}get parentNode(){return this._$AM.parentNode}get _$AU(){return this._$AM._$AU}u(t){let{el:{content:e},parts:s}=this._$AD,i=(t?.creationScope??b).importNode(e,!0);y.currentNode=i;let o=y.nextNode(),a=0,h=0,n=s[0];for(;n!==void 0;){if(a===n.index){let p;n.type===2?p=new T(o,o.nextSibling,this,t):n.type===1?p=new n.ctor(o,n.name,n.strings,this,t):n.type===6&&(p=new G(o,this,t)),this._$AV.push(p),n=s[++h]}a!==n?.index&&(o=y.nextNode(),a++)}return y.currentNode=b,i}p(t){let e=0;for(let s of this._$AV)s!==void 0&&(s.strings!==void 0?(s._$AI(t,s,e),e+=s.strings.length-2):s._$AI(t[e])),e++}},T=class r{get _$AU(){return this._$AM?._$AU??this._$Cv}constructor(t,e,s,i){this.type=2,this._$AH=l,this._$AN=void 0,this._$AA=t,this._$AB=e,this._$AM=s,this.options=i,this._$Cv=i?.isConnected??!0}get parentNode(){let t=this._$AA.parentNode,e=this._$AM;return e!==void 0&&t?.nodeType===11&&(t=e.parentNode),t}get startNode(){return this._$AA}get endNode(){return this._$AB}_$AI(t,e=this){t=w(this,t,e),P(t)?t===l||t==null||t===""?(this._$AH!==l&&this._$AR(),this._$AH=l):t!==this._$AH&&t!==x&&this._(t):t._$litType$!==void 0?this.$(t):t.nodeType!==void 0?this.T(t):Ot(t)?this.k(t):this._(t)}O(t){return this._$AA.parentNode.insertBefore(t,this._$AB)}T(t){this._$AH!==t&&(this._$AR(),this._$AH=this.O(t))}_(t){this._$AH!==l&&P(this._$AH)?this._$AA.nextSibling.data=t:this.T(b.createTextNode(t)),this._$AH=t}$(t){let{values:e,_$litType$:s}=t,i=typeof s=="number"?this._$AC(t):(s.el===void 0&&(s.el=O.createElement(gt(s.h,s.h[0]),this.options)),s);if(this._$AH?._$AD===i)this._$AH.p(e);else{let o=new W(i,this),a=o.u(this.options);o.p(e),this.T(a),this._$AH=o}}_$AC(t){let e=pt.get(t.strings);return e===void 0&&pt.set(t.strings,e=new O(t)),e}k(t){Y(this._$AH)||(this._$AH=[],this._$AR());let e=this._$AH,s,i=0;for(let o of t)i===e.length?e.push(s=new r(this.O(k()),this.O(k()),this,this.options)):s=e[i],s._$AI(o),i++;i<e.length&&(this._$AR(s&&s._$AB.nextSibling,i),e.length=i)}_$AR(t=this._$AA.nextSibling,e){for(this._$AP?.(!1,!0,e);t!==this._$AB;){let s=at(t).nextSibling;at(t).remove(),t=s}}setConnected(t){this._$AM===void 0&&(this._$Cv=t,this._$AP?.(t))}},A=class{get tagName(){return this.element.tagName}get _$AU(){return this._$AM._$AU}constructor(t,e,s,i,o){this.type=1,this._$AH=l,this._$AN=void 0,this.element=t,this.name=e,this._$AM=i,this.options=o,s.length>2||s[0]!==""||s[1]!==""?(this._$AH=Array(s.length-1).fill(new String),this.strings=s):this._$AH=l}_$AI(t,e=this,s,i){let o=this.strings,a=!1;if(o===void 0)t=w(this,t,e,0),a=!P(t)||t!==this._$AH&&t!==x,a&&(this._$AH=t);else{let h=t,n,p;for(t=o[0],n=0;n<o.length-1;n++)p=w(this,h[s+n],e,n),p===x&&(p=this._$AH[n]),a||=!P(p)||p!==this._$AH[n],p===l?t=l:t!==l&&(t+=(p??"")+o[n+1]),this._$AH[n]=p}a&&!i&&this.j(t)}j(t){t===l?this.element.removeAttribute(this.name):this.element.setAttribute(this.name,t??"")}},V=class extends A{constructor(){super(...arguments),this.type=3}j(t){this.element[this.name]=t===l?void 0:t}},F=class extends A{constructor(){super(...arguments),this.type=4}j(t){this.element.toggleAttribute(this.name,!!t&&t!==l)}},K=class extends A{constructor(t,e,s,i,o){super(t,e,s,i,o),this.type=5}_$AI(t,e=this){if((t=w(this,t,e,0)??l)===x)return;let s=this._$AH,i=t===l&&s!==l||t.capture!==s.capture||t.once!==s.once||t.passive!==s.passive,o=t!==l&&(s===l||i);i&&this.element.removeEventListener(this.name,this,s),o&&this.element.addEventListener(this.name,this,t),this._$AH=t}handleEvent(t){typeof this._$AH=="function"?this._$AH.call(this.options?.host??this.element,t):this._$AH.handleEvent(t)}},G=class{constructor(t,e,s){this.element=t,this.type=6,this._$AN=void 0,this._$AM=e,this.options=s}get _$AU(){return this._$AM._$AU}_$AI(t){w(this,t)}};var Ut=J.litHtmlPolyfillSupport;Ut?.(O,T),(J.litHtmlVersions??=[]).push("3.3.3");var ft=(r,t,e)=>{let s=e?.renderBefore??t,i=s._$litPart$;if(i===void 0){let o=e?.renderBefore??null;s._$litPart$=i=new T(t.insertBefore(k(),o),o,void 0,e??{})}return i._$AI(r),i};var Q=globalThis,m=class extends ${constructor(){super(...arguments),this.renderOptions={host:this},this._$Do=void 0}createRenderRoot(){let t=super.createRenderRoot();return this.renderOptions.renderBefore??=t.firstChild,t}update(t){let e=this.render();this.hasUpdated||(this.renderOptions.isConnected=this.isConnected),super.update(t),this._$Do=ft(e,this.renderRoot,this.renderOptions)}connectedCallback(){super.connectedCallback(),this._$Do?.setConnected(!0)}disconnectedCallback(){super.disconnectedCallback(),this._$Do?.setConnected(!1)}render(){return x}};m._$litElement$=!0,m.finalized=!0,Q.litElementHydrateSupport?.({LitElement:m});var Rt=Q.litElementPolyfillSupport;Rt?.({LitElement:m});(Q.litElementVersions??=[]).push("4.2.2");var X={en:{title:"Memory",menu:"Menu",search:"Search memories",searchHint:"Type to search by words and meaning",everyone:"Everyone I may see",household:"Household",status:"Status",active:"Active",expiring:"Expiring",archived:"Forgotten",superseded:"Replaced",any:"Any",order:"Order",relevance:"Best match",newest:"Newest",recalled:"Most recalled",owner:"Whose",shown:"{shown} of {total}",more:"Show more",none:"No memories here yet.",loading:"Loading\u2026",close:"Close",add:"Add",edit:"Edit",save:"Save",cancel:"Cancel",text:"Text",overview:"Overview",health:"Database {size} MB \xB7 search by {search} \xB7 {waiting} conversations waiting for digestion \xB7 AI Task {calls} of {cap} calls in the last hour",keywordOnly:"keywords only",profiles:"Profiles",noProfiles:"No profile written yet.",refresh:"Refresh now",forget:"Forget",restore:"Restore",purge:"Erase for good",purgeConfirm:"Erase this memory for good? Its text, its vectors and every copy in the database and the exports are removed; it cannot be restored.",created:"Created",updated:"Updated",expires:"Expires",recalledTimes:"Recalled",lastRecalled:"Last recalled",never:"never",type:"Type",tags:"Tags",origin:"Came from",conversation:"Conversation",replaced:"It replaced",replacedBy:"Replaced by",error:"Something went wrong: {error}"}};function mt(r,t,e={}){let i=(X[r?.split("-")[0]]??X.en)[t]??X.en[t]??t;for(let[o,a]of Object.entries(e))i=i.replace(`{${o}}`,String(a));return i}var Nt=50,Ht=250,U=class extends m{constructor(){super(),this._memories=[],this._total=0,this._cursor=null,this._query="",this._person="",this._status="active",this._order="newest",this._open=null,this._loading=!1,this._error="",this._editing=null,this._overview=null,this._asked=0,this._typing=void 0,this._unsubscribe=void 0}t(t,e){return mt(this.hass?.locale?.language??this.hass?.language,t,e)}connectedCallback(){super.connectedCallback(),this.hass&&this._start()}disconnectedCallback(){super.disconnectedCallback(),this._unsubscribe?.then(t=>t()).catch(()=>{}),this._unsubscribe=void 0}updated(t){t.has("hass")&&this.hass&&!this._unsubscribe&&this._start()}_start(){this._unsubscribe=this.hass.connection.subscribeMessage(()=>{this._load(!1),this._loadOverview()},{type:"memory/subscribe"}),this._load(!1),this._loadOverview()}async _loadOverview(){try{this._overview=await this.hass.callWS({type:"memory/overview"})}catch(t){this._error=t?.message??String(t)}}async _refreshProfile(t){try{await this.hass.callWS({type:"memory/refresh_profile",person:t.household?"household":t.scope}),await this._loadOverview()}catch(e){this._error=e?.message??String(e)}}_overviewPart(){let t=this._overview;if(!t)return l;let{counts:e,health:s,profiles:i}=t,o=(s.database_bytes/1048576).toFixed(1);return c`<details class="overview">
      <summary>
        ${this.t("overview")}:
        ${["active","expiring","archived","superseded"].map(a=>c`<span class="chip">${this.t(a)} ${e[a]}</span>`)}
      </summary>
      <p class="health">
        ${this.t("health",{size:o,search:s.model??this.t("keywordOnly"),waiting:s.digestion_waiting,calls:s.ai_task_calls_last_hour,cap:s.ai_task_max_calls_per_hour})}
      </p>
      <h3>${this.t("profiles")}</h3>
      ${i.length?c`<ul class="profiles">
            ${i.map(a=>c`<li>
                <span class="chip ${a.household?"house":"person"}">${a.owner}</span>
                <span class="content">${a.content}</span>
                <button class="link" @click=${()=>this._refreshProfile(a)}>
                  ${this.t("refresh")}
                </button>
              </li>`)}
          </ul>`:c`<p class="count">${this.t("noProfiles")}</p>`}
    </details>`}async _load(t){let e=++this._asked,s={type:"memory/browse",status:this._status,limit:Nt,order:this._query.trim()?"relevance":this._order};this._query.trim()&&(s.query=this._query.trim()),this._person&&(s.person=this._person),t&&this._cursor&&(s.cursor=this._cursor),this._loading=!0;try{let i=await this.hass.callWS(s);if(e!==this._asked)return;this._memories=t?[...this._memories,...i.memories]:i.memories,this._total=i.total,this._cursor=i.cursor,this._error=""}catch(i){e===this._asked&&(this._error=i?.message??String(i))}finally{e===this._asked&&(this._loading=!1)}}_menu(){this.dispatchEvent(new Event("hass-toggle-menu",{bubbles:!0,composed:!0}))}_typed(t){this._query=t.target.value,clearTimeout(this._typing),this._typing=setTimeout(()=>this._load(!1),Ht)}_chose(t,e){this[t]=e.target.value,this._load(!1)}async _show(t){try{this._open=await this.hass.callWS({type:"memory/get",memory_id:t}),this._error=""}catch(e){this._error=e?.message??String(e)}}async _act(t,e,s=!1){if(!(s&&!window.confirm(this.t("purgeConfirm"))))try{let i={type:t,memory_ids:[e]};s&&(i.purge=!0),await this.hass.callWS(i),s?this._open=null:await this._show(e),await this._load(!1)}catch(i){this._error=i?.message??String(i)}}_edit(t){this._editing=t?{id:t.id,content:t.content,memory_type:t.type,tags:t.tags.join(", "),person:t.household?"household":t.scope,expires_at:t.expires_at?t.expires_at.slice(0,16):""}:{content:"",memory_type:"fact",tags:"",person:"household",expires_at:""}}async _save(t){t.preventDefault();let e=new FormData(t.target),s=String(e.get("tags")??"").split(",").map(h=>h.trim()).filter(Boolean),i=String(e.get("expires_at")??""),o=String(e.get("person")),a={content:String(e.get("content")??""),memory_type:String(e.get("memory_type")),tags:s};try{let h;this._editing.id?h=(await this.hass.callWS({...a,type:"memory/update",memory_id:this._editing.id,person:o,expires_at:i?new Date(i).toISOString():null})).memory.id:(o!=="household"&&(a.person=o),i&&(a.expires_at=new Date(i).toISOString()),h=(await this.hass.callWS({...a,type:"memory/add"})).id),this._editing=null,await this._show(h),await this._load(!1)}catch(h){this._error=h?.message??String(h)}}_editor(){let t=this._editing,e=["fact","preference","instruction","event","summary","other"];return c`<form class="editor" @submit=${this._save} aria-label=${t.id?this.t("edit"):this.t("add")}>
      <label>
        <span>${this.t("text")}</span>
        <textarea name="content" required rows="3" .value=${t.content}></textarea>
      </label>
      <label>
        <span>${this.t("type")}</span>
        <select name="memory_type">
          ${e.map(s=>c`<option value=${s} ?selected=${s===t.memory_type}>${s}</option>`)}
        </select>
      </label>
      <label>
        <span>${this.t("tags")}</span>
        <input name="tags" .value=${t.tags} />
      </label>
      <label>
        <span>${this.t("owner")}</span>
        <select name="person">
          <option value="household" ?selected=${t.person==="household"}>${this.t("household")}</option>
          ${this._persons().map(s=>c`<option value=${s.id} ?selected=${s.id===t.person}>${s.name}</option>`)}
        </select>
      </label>
      <label>
        <span>${this.t("expires")}</span>
        <input name="expires_at" type="datetime-local" .value=${t.expires_at} />
      </label>
      <div class="actions">
        <button type="submit">${this.t("save")}</button>
        <button type="button" @click=${()=>this._editing=null}>${this.t("cancel")}</button>
      </div>
    </form>`}_persons(){return Object.values(this.hass?.states??{}).filter(t=>t.entity_id.startsWith("person.")).map(t=>({id:t.entity_id,name:t.attributes.friendly_name??t.entity_id}))}_date(t){return t?new Date(t).toLocaleString(this.hass?.locale?.language??void 0):this.t("never")}render(){return this.hass?c`
      <header class=${this.narrow?"narrow":""}>
        ${this.narrow?c`<button class="menu" @click=${this._menu} aria-label=${this.t("menu")}>☰</button>`:l}
        <h1>${this.t("title")}</h1>
        <button class="add" @click=${()=>this._edit(null)}>${this.t("add")}</button>
        <input
          type="search"
          .value=${this._query}
          @input=${this._typed}
          placeholder=${this.t("searchHint")}
          aria-label=${this.t("search")}
        />
        <div class="filters">
          <label>
            <span>${this.t("owner")}</span>
            <select @change=${t=>this._chose("_person",t)} aria-label=${this.t("owner")}>
              <option value="">${this.t("everyone")}</option>
              <option value="household">${this.t("household")}</option>
              ${this._persons().map(t=>c`<option value=${t.id}>${t.name}</option>`)}
            </select>
          </label>
          <label>
            <span>${this.t("status")}</span>
            <select @change=${t=>this._chose("_status",t)} aria-label=${this.t("status")}>
              ${["active","expiring","archived","superseded","any"].map(t=>c`<option value=${t} ?selected=${t===this._status}>
                    ${this.t(t)}
                  </option>`)}
            </select>
          </label>
          <label>
            <span>${this.t("order")}</span>
            <select
              @change=${t=>this._chose("_order",t)}
              aria-label=${this.t("order")}
              ?disabled=${!!this._query.trim()}
            >
              ${["newest","recalled"].map(t=>c`<option value=${t} ?selected=${t===this._order}>
                    ${this.t(t)}
                  </option>`)}
            </select>
          </label>
        </div>
      </header>
      ${this._error?c`<p class="error" role="alert">${this.t("error",{error:this._error})}</p>`:l}
      <main>
        ${this._overviewPart()}
        <p class="count" aria-live="polite">
          ${this._loading&&!this._memories.length?this.t("loading"):this._memories.length?this.t("shown",{shown:this._memories.length,total:this._total}):this.t("none")}
        </p>
        <ul class="list">
          ${this._memories.map(t=>this._row(t))}
        </ul>
        ${this._cursor?c`<button class="more" @click=${()=>this._load(!0)}>${this.t("more")}</button>`:l}
      </main>
      ${this._open?this._detail(this._open):l}
      ${this._editing&&!this._editing.id?c`<section class="detail" role="dialog" aria-label=${this.t("add")}>
            <header><h2>${this.t("add")}</h2></header>
            ${this._editor()}
          </section>`:l}
    `:l}_row(t){return c`<li>
      <button
        class="memory ${t.status}"
        @click=${()=>this._show(t.id)}
        aria-label=${`#${t.id}: ${t.content}`}
      >
        <span class="content">${t.content}</span>
        <span class="meta">
          <span class="chip ${t.household?"house":"person"}">${t.owner}</span>
          <span>${t.type}</span>
          <span>${this._date(t.created_at)}</span>
          ${t.status!=="active"?c`<span class="chip">${this.t(t.status)}</span>`:l}
        </span>
      </button>
    </li>`}_detail({memory:t,superseded:e,superseded_by:s}){let i=(o,a)=>c`<dt>${o}</dt><dd>${a}</dd>`;return c`<section class="detail" role="dialog" aria-modal="false" aria-label=${`#${t.id}`}>
      <header>
        <h2>#${t.id}</h2>
        <button
          @click=${()=>{this._open=null,this._editing=null}}
          aria-label=${this.t("close")}
        >
          ✕
        </button>
      </header>
      ${this._editing?.id===t.id?this._editor():c`<p class="full">${t.content}</p>`}
      <dl>
        ${i(this.t("owner"),t.owner)}
        ${i(this.t("type"),t.type)}
        ${i(this.t("status"),this.t(t.status))}
        ${i(this.t("tags"),t.tags.join(", ")||"\u2013")}
        ${i(this.t("created"),this._date(t.created_at))}
        ${i(this.t("updated"),this._date(t.updated_at))}
        ${t.expires_at?i(this.t("expires"),this._date(t.expires_at)):l}
        ${i(this.t("recalledTimes"),t.recall_count)}
        ${i(this.t("lastRecalled"),this._date(t.last_recalled_at))}
        ${i(this.t("origin"),t.source.origin)}
        ${t.source.conversation_id?i(this.t("conversation"),t.source.conversation_id):l}
      </dl>
      ${e.length?this._chain(this.t("replaced"),e):l}
      ${s.length?this._chain(this.t("replacedBy"),s):l}
      <div class="actions">
        ${t.status==="active"&&this._editing?.id!==t.id?c`<button @click=${()=>this._edit(t)}>${this.t("edit")}</button>`:l}
        ${t.status==="active"?c`<button @click=${()=>this._act("memory/forget",t.id)}>${this.t("forget")}</button>`:l}
        ${t.status==="archived"?c`<button @click=${()=>this._act("memory/restore",t.id)}>${this.t("restore")}</button>`:l}
        <button class="danger" @click=${()=>this._act("memory/forget",t.id,!0)}>
          ${this.t("purge")}
        </button>
      </div>
    </section>`}_chain(t,e){return c`<h3>${t}</h3>
      <ol class="chain">
        ${e.map(s=>c`<li><button class="link" @click=${()=>this._show(s.id)}>
              #${s.id} ${s.content}
            </button></li>`)}
      </ol>`}};D(U,"properties",{hass:{attribute:!1},narrow:{type:Boolean},panel:{attribute:!1},_memories:{state:!0},_total:{state:!0},_cursor:{state:!0},_query:{state:!0},_person:{state:!0},_status:{state:!0},_order:{state:!0},_open:{state:!0},_loading:{state:!0},_error:{state:!0},_editing:{state:!0},_overview:{state:!0}}),D(U,"styles",j`
    :host {
      display: block;
      min-height: 100vh;
      background: var(--primary-background-color);
      color: var(--primary-text-color);
      font-family: var(--paper-font-body1_-_font-family, var(--ha-font-family-body, sans-serif));
    }
    header {
      display: flex;
      flex-wrap: wrap;
      gap: 12px;
      align-items: center;
      padding: 12px 16px;
      background: var(--app-header-background-color, var(--primary-color));
      color: var(--app-header-text-color, var(--text-primary-color));
    }
    .menu {
      border: none;
      background: transparent;
      color: inherit;
      font-size: 22px;
      cursor: pointer;
      padding: 4px 8px;
    }
    h1 {
      margin: 0;
      font-size: 20px;
      font-weight: 400;
      flex: 0 0 auto;
    }
    input[type="search"] {
      flex: 1 1 240px;
      min-width: 0;
      padding: 8px 12px;
      border-radius: 8px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
      font-size: 16px;
    }
    .filters {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
    }
    label {
      display: flex;
      flex-direction: column;
      font-size: 12px;
    }
    select {
      padding: 6px;
      border-radius: 6px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
    }
    main {
      padding: 8px 16px 32px;
      max-width: 960px;
      margin: 0 auto;
    }
    .count {
      color: var(--secondary-text-color);
      font-size: 14px;
    }
    .list {
      list-style: none;
      margin: 0;
      padding: 0;
      display: grid;
      gap: 8px;
    }
    .memory {
      width: 100%;
      text-align: start;
      display: flex;
      flex-direction: column;
      gap: 6px;
      padding: 12px;
      border-radius: 12px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
      font: inherit;
      cursor: pointer;
    }
    .memory:focus-visible,
    button:focus-visible,
    select:focus-visible,
    input:focus-visible {
      outline: 2px solid var(--primary-color);
      outline-offset: 2px;
    }
    .memory.archived,
    .memory.superseded {
      opacity: 0.7;
    }
    .content {
      overflow-wrap: anywhere;
    }
    .meta {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      font-size: 12px;
      color: var(--secondary-text-color);
    }
    .chip {
      padding: 0 8px;
      border-radius: 10px;
      background: var(--secondary-background-color);
    }
    .chip.person {
      background: var(--primary-color);
      color: var(--text-primary-color);
    }
    .more,
    .actions button {
      margin-top: 12px;
      padding: 8px 16px;
      border-radius: 8px;
      border: 1px solid var(--primary-color);
      background: transparent;
      color: var(--primary-color);
      font: inherit;
      cursor: pointer;
    }
    .actions button.danger {
      border-color: var(--error-color);
      color: var(--error-color);
    }
    .error {
      margin: 8px 16px;
      color: var(--error-color);
    }
    .detail {
      position: fixed;
      inset: auto 0 0 auto;
      top: 0;
      width: min(420px, 100vw);
      overflow-y: auto;
      background: var(--card-background-color);
      color: var(--primary-text-color);
      border-inline-start: 1px solid var(--divider-color);
      box-shadow: var(--ha-card-box-shadow, 0 0 12px rgba(0, 0, 0, 0.3));
      padding-bottom: 24px;
    }
    .detail header {
      justify-content: space-between;
    }
    .detail header button {
      border: none;
      background: transparent;
      color: inherit;
      font-size: 20px;
      cursor: pointer;
    }
    .detail h2 {
      margin: 0;
      font-size: 18px;
      font-weight: 400;
    }
    .full,
    .detail dl,
    .detail h3,
    .chain,
    .actions {
      margin-inline: 16px;
    }
    .full {
      font-size: 16px;
      overflow-wrap: anywhere;
    }
    dl {
      display: grid;
      grid-template-columns: max-content 1fr;
      gap: 4px 12px;
      font-size: 14px;
    }
    dt {
      color: var(--secondary-text-color);
    }
    dd {
      margin: 0;
      overflow-wrap: anywhere;
    }
    .link {
      border: none;
      background: none;
      color: var(--primary-color);
      text-align: start;
      font: inherit;
      cursor: pointer;
      padding: 2px 0;
    }
    .overview {
      margin: 8px 0;
      padding: 8px 12px;
      border-radius: 12px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
    }
    .overview summary {
      cursor: pointer;
      display: flex;
      flex-wrap: wrap;
      gap: 6px;
      align-items: center;
    }
    .health {
      font-size: 13px;
      color: var(--secondary-text-color);
    }
    .profiles {
      list-style: none;
      padding: 0;
      display: grid;
      gap: 6px;
    }
    .profiles li {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
      align-items: baseline;
    }
    .editor {
      display: grid;
      gap: 8px;
      margin: 12px 16px;
    }
    .editor label {
      font-size: 14px;
    }
    textarea,
    .editor input {
      font: inherit;
      padding: 6px;
      border-radius: 6px;
      border: 1px solid var(--divider-color);
      background: var(--card-background-color);
      color: var(--primary-text-color);
    }
    .add {
      padding: 6px 14px;
      border-radius: 8px;
      border: 1px solid currentColor;
      background: transparent;
      color: inherit;
      font: inherit;
      cursor: pointer;
    }
    .actions {
      display: flex;
      flex-wrap: wrap;
      gap: 8px;
    }
  `);customElements.get("memory-panel")||customElements.define("memory-panel",U);export{U as MemoryPanel};
/*! Bundled license information:

@lit/reactive-element/css-tag.js:
  (**
   * @license
   * Copyright 2019 Google LLC
   * SPDX-License-Identifier: BSD-3-Clause
   *)

@lit/reactive-element/reactive-element.js:
lit-html/lit-html.js:
lit-element/lit-element.js:
  (**
   * @license
   * Copyright 2017 Google LLC
   * SPDX-License-Identifier: BSD-3-Clause
   *)

lit-html/is-server.js:
  (**
   * @license
   * Copyright 2022 Google LLC
   * SPDX-License-Identifier: BSD-3-Clause
   *)
*/
